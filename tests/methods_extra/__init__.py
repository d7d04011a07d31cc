"""Methods registered from a module of their own, through the decorators (tests/test_registered_methods.py)."""
