"""compiler/model."""
