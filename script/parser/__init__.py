"""The parser: Python `ast` of decorated code -> IR (core machinery, module entry points,
the tensor (T) and graph (R) dialects)."""
