"""The messaging gateway (layer 6 frontend): one asyncio process serving chats on messaging platforms."""
