"""Reading the repository under test: its Python files and the layout of its tests."""
