"""Step 5b of the pipeline: turn planned fixes into edits, apply them, verify, write atomically."""
