"""Node types, one module each; ``base.load_node_modules`` registers them all."""
