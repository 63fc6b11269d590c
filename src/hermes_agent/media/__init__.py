"""Media backends behind the image, speech and transcription tools and the gateway's voice notes."""
