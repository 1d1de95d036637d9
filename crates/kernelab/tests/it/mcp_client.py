"""A real MCP client (the official Python SDK, `mcp` on PyPI) driving `kernelab mcp` over stdio.

Reads a plan (JSON) on standard input: the server's command line and the steps to take; writes
one JSON object per step to standard output, as a list. Used by the Rust test
crates/kernelab/tests/it/mcp.rs, which compares each structured result with the CLI's own JSON.
Exit status 3 when `mcp` is not importable (the test then skips, saying so).
"""

import json
import sys
import time

try:
    import anyio
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client
    from mcp.shared.exceptions import MCPError
except ImportError as e:  # pragma: no cover - reported by the Rust test
    print(f"mcp not importable: {e}", file=sys.stderr)
    sys.exit(3)


def dump(model):
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


def error_of(e):
    return {"error": {"code": e.code, "message": e.message, "data": e.data}}


async def step(session, s):
    op = s["op"]
    if op == "list_tools":
        tools = await session.list_tools()
        return {"tools": [dump(t) for t in tools.tools]}
    if op == "call":
        progress = []

        async def on_progress(p, total, message):
            progress.append({"progress": p, "total": total, "message": message})

        t0 = time.monotonic()
        try:
            r = await session.call_tool(s["tool"], s.get("args", {}), progress_callback=on_progress)
        except MCPError as e:
            return error_of(e)
        out = dump(r)
        out["progress"] = progress
        out["seconds"] = time.monotonic() - t0
        return out
    if op == "call_cancel":
        # Cancel the call (anyio cancel scope: the SDK sends notifications/cancelled) once
        # `after_progress` progress notifications have arrived.
        got = anyio.Event()
        progress = []

        async def on_progress(p, total, message):
            progress.append({"progress": p, "total": total, "message": message})
            if len(progress) >= s.get("after_progress", 1):
                got.set()

        result = {}
        async with anyio.create_task_group() as tg:

            async def call():
                try:
                    r = await session.call_tool(s["tool"], s.get("args", {}), progress_callback=on_progress)
                    result["finished"] = dump(r)
                except MCPError as e:
                    result.update(error_of(e))
                tg.cancel_scope.cancel()

            tg.start_soon(call)
            with anyio.move_on_after(s.get("timeout", 120)):
                await got.wait()
            tg.cancel_scope.cancel()
        result["progress"] = progress
        result["cancelled_at"] = time.time()
        # Give the server time to stop the process tree.
        await anyio.sleep(s.get("settle", 0))
        return result
    if op == "list_resources":
        r = await session.list_resources()
        return {"resources": [dump(x) for x in r.resources]}
    if op == "list_resource_templates":
        r = await session.list_resource_templates()
        return {"templates": [dump(x) for x in r.resource_templates]}
    if op == "read_resource":
        try:
            r = await session.read_resource(s["uri"])
        except MCPError as e:
            return error_of(e)
        return dump(r)
    if op == "list_prompts":
        r = await session.list_prompts()
        return {"prompts": [dump(x) for x in r.prompts]}
    if op == "get_prompt":
        try:
            r = await session.get_prompt(s["name"], s.get("args", {}))
        except MCPError as e:
            return error_of(e)
        return dump(r)
    raise ValueError(f"unknown op {op!r}")


async def main():
    plan = json.load(sys.stdin)
    params = StdioServerParameters(
        command=plan["command"], args=plan["args"], cwd=plan.get("cwd"), env=plan.get("env")
    )
    out = []
    with open(plan.get("errlog", "/dev/null"), "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as session:
                t0 = time.monotonic()
                init = await session.initialize()
                out.append({"initialize": dump(init), "seconds": time.monotonic() - t0})
                for s in plan["steps"]:
                    out.append(await step(session, s))
    json.dump(out, sys.stdout)


anyio.run(main)
