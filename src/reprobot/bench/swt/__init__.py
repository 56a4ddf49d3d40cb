"""``bench swt``: SWT-Bench's evaluation of test-patch predictions (W, S, F→P, ΔC),
and of Reprobot's own drafts as such predictions."""
