"""The API reference's parts: descriptors and comments, pages, error reasons."""
