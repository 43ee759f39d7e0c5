"""What environments, agents and optimizers share: call records and trajectories, the sandbox tools run in,
injected faults, worker threads with progress, data shipped in wheels, and plain-text tables."""
