"""The evaluation harness: SWT-Bench metrics, patch-correctness metrics, reports and plots."""
