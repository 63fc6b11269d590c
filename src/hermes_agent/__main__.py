"""`python -m hermes_agent` runs the CLI."""

from hermes_agent.cli.main import main

raise SystemExit(main())
