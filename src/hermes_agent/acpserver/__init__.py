"""`hermes acp`: the agent for editors over the Agent Client Protocol (stdio JSON-RPC)."""
