"""compiler/core."""
