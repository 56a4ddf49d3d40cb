"""Work done for a delivery: the queue, the worker and its reaper, and one module per job."""
