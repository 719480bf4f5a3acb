"""One module per ``accord`` subcommand, each exposing ``command`` (a click command)."""
