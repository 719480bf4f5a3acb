"""compiler/exposure."""
