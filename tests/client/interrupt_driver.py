"""A toolrelay-using program that gets interrupted: run by test_client_interrupt.py.

Usage: python interrupt_driver.py graceful|careless LOG_DIR
Starts the toolbox server, has it spawn a grandchild, prints {"server": pid,
"grandchild": pid} and waits to be signalled. "graceful" closes the connection in a
finally block; "careless" never does, so only toolrelay's backstop can clean up.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from toolrelay.client.config import ServerConfig
from toolrelay.client.connection import Connection
from toolrelay.events import EventStream

SERVER = Path(__file__).resolve().parents[1] / "testkit" / "servers" / "toolbox_server.py"


async def main(mode: str, log_dir: Path) -> None:
    config = ServerConfig(name="box", transport="stdio", command=sys.executable, args=(str(SERVER),))
    connection = Connection(config, EventStream(), log_dir=log_dir)
    await connection.start()
    try:
        exchange = await connection.call_tool("spawn", {})
        grandchild = int(exchange.raise_for_error()["content"][0]["text"])
        print(json.dumps({"server": connection.pid, "grandchild": grandchild}), flush=True)
        await asyncio.sleep(600)
    finally:
        if mode == "graceful":
            await connection.close()
            print("closed", flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], Path(sys.argv[2])))
