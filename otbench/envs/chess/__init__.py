"""Chess: pick one of several opaque move-suggesting engines every move (OpaqueToolsBench)."""
