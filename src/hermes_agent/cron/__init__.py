"""Scheduled jobs: schedule.py (pure parsing and next-run), jobs.py (the store and its lock), scheduler.py."""
