"""``reprobot bench repos``: first contact with a list of repositories. Each is detected with no
table and no overrides, its environment built, its test suite run once; the report says per
repository what decided the setup, what the build cost and whether the suite works."""
