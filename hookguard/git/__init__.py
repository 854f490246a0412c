"""Reading git repositories: trees, blobs and history, always without touching the work tree."""
