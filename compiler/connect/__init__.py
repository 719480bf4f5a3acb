"""compiler/connect."""
