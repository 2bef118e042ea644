"""Channel adapters: one module per channel/provider family, found through ``adapters``."""
