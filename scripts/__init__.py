"""Developer scripts (code generation); not part of the installed package."""
