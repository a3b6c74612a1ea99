"""``/ui``: the job pages, plain HTML, CSS and JavaScript shipped in the package (no
build step, no CDN). The page holds no data: it reads the JSON routes (``/v1/jobs``,
``/v1/jobs/{id}``, ``/v1/jobs/{id}/summary``) with the caller's key, so it is served
without one, like ``/docs``."""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter, FastAPI
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles

PAGES = Path(__file__).resolve().parent.parent / "ui"
UI_PATHS = frozenset({"/ui"})
ASSETS = "/ui/assets"

router = APIRouter(include_in_schema=False)


@router.get("/ui")
async def page() -> FileResponse:
    """The one page; ``#job/<id>`` in its address shows a job."""
    return FileResponse(PAGES / "index.html", media_type="text/html")


def install_ui(app: FastAPI) -> None:
    """Serve the page at ``/ui`` and its script and style under `ASSETS`."""
    app.mount(ASSETS, StaticFiles(directory=PAGES), name="ui-assets")
    app.include_router(router)
