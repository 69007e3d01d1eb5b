"""lumo benchmark harness: see bench/README.md."""
