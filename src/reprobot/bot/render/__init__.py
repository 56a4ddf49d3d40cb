"""What the App writes for people: markdown helpers and the comments and check texts."""
