"""Platform adapters: one file each, each translating one platform's API to the PlatformAdapter seam."""
