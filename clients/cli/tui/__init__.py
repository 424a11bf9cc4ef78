"""The full-screen terminal client (Textual): the table drawn in place."""
