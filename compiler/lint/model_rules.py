"""Rules over the policy model. (Filled in by the lint work; see compiler/lint/__init__.py.)"""
