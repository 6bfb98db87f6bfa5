"""Level 0: settings, database (Base, get_or_404), units (the one parser and the template filters),
templating, forms, security, static assets, middleware. Imports no feature."""
