"""From GitHub's deliveries to jobs: the web app, the router, and one module per event."""
