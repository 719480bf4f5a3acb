"""targets/terraform."""
