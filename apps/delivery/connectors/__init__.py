"""Console pages for a project's provider connectors."""
