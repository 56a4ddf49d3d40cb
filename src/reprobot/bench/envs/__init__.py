"""What an instance runs in: the environment table (the harness's own converted without conda,
Reprobot's overlay merged over it), the snapshots and image an evaluation starts from, and the
images a run stood on."""
