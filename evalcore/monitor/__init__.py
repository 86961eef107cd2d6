"""Continuous monitoring: schedules that run an evaluation again and again, a
stored baseline per dataset and model, alerts when a scheduled run's gate fails, and the
figures the monitoring view draws. The rows live in `store.schedules`, `store.baselines`
and `store.alerts`; this package holds what sits above the runner and the reports."""
