"""What a benchmark evaluates, as Reprobot's types: SWE-bench instances (read from a file, or from
a public dataset by name), test-patch predictions, and the dataset's test ids resolved to node
ids."""
