"""The Python MCP SDK, a client from another language, against agent-context.

Usage: mcp_client_check.py stdio|http legacy|modern TARGET [KEY]
  stdio: TARGET is the path of dist/cli.js; the server runs as `node TARGET mcp` with DATA_DIR from the
         environment (the local agent).
  http:  TARGET is the /mcp URL; KEY goes in X-API-Key.
  legacy opens with `initialize` (the 2025 era), modern with `server/discover` (2026-07-28).
Prints one JSON object: the era the session landed on, the tool names, a stored memory read back, a resource
read, and an error result. test/python/python-client.test.ts runs it and checks what it prints.
"""

import asyncio
import json
import os
import sys
from contextlib import asynccontextmanager

import httpx2
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client


@asynccontextmanager
async def streams(mode: str, target: str, key: str | None):
    if mode == "stdio":
        params = StdioServerParameters(
            command="node", args=[target, "mcp"], env={"DATA_DIR": os.environ["DATA_DIR"]}
        )
        async with stdio_client(params) as (read, write):
            yield read, write
    else:
        async with httpx2.AsyncClient(headers={"X-API-Key": key or ""}, timeout=30) as http:
            async with streamable_http_client(target, http_client=http) as (read, write):
                yield read, write


def structured(result) -> dict:
    return result.structured_content or json.loads(result.content[0].text)


async def main(mode: str, era: str, target: str, key: str | None) -> None:
    async with streams(mode, target, key) as (read, write):
        async with ClientSession(read, write) as session:
            if era == "modern":
                await session.discover()
            else:
                await session.initialize()
            tools = await session.list_tools()
            stored = await session.call_tool(
                "memory_store", {"memory_key": f"python-{mode}-{era}", "memory_value": "from Python"}
            )
            got = await session.call_tool("memory_retrieve", {"memory_key": f"python-{mode}-{era}"})
            missing = await session.call_tool("memory_retrieve", {"memory_key": "not-there"})
            account = await session.read_resource("ac://account")
            print(
                json.dumps(
                    {
                        "protocol_version": session.protocol_version,
                        "tools": sorted(t.name for t in tools.tools),
                        "stored": structured(stored),
                        "retrieved": structured(got),
                        "missing": {"is_error": missing.is_error, "body": json.loads(missing.content[0].text)},
                        "account": json.loads(account.contents[0].text),
                    }
                )
            )


if __name__ == "__main__":
    mode, era, target = sys.argv[1], sys.argv[2], sys.argv[3]
    asyncio.run(main(mode, era, target, sys.argv[4] if len(sys.argv) > 4 else None))
