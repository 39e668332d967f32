"""Models in plain JAX whose training steps the importer turns into listings."""
