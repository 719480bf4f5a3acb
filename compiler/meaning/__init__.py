"""compiler/meaning."""
