"""BrowseComp Domains: multi-hop questions over a generated web corpus, searched with opaque domain tools."""
