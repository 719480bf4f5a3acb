"""compiler/history."""
