"""Report pages: one per reproduction and one per verdict, as documents stored with a job's
results (``documents``) and rendered to self-contained HTML (``html``)."""
