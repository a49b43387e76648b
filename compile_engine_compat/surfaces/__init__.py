"""Legacy surfaces beside the engine: globals, pass config, import alias, warnings."""
