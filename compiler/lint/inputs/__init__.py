"""compiler/lint/inputs."""
