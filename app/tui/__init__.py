"""The Textual front end."""
