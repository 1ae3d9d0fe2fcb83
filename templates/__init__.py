"""Jinja2 templates of the files kgen generates (shipped as package data of kgen)."""
