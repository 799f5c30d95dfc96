"""The explorers' machinery: interactive pictures, each declared once (`definition`), found by `registry`.

The explorers themselves live in the chapters that show them: each chapter's unit holds its
explorers' definitions (`lib/chapters/PART/UNIT/explorers.py`: its controls and what its view holds),
each registered where it is defined (`registry.registered`, also named by `definition`, with where it
sits on Part 1's map); the registry finds them by walking the units. The views they show are computed
beside their computations in `lib.analysis`; `shared` holds what several chapters' explorers use;
`boxes` reads what a reader types; `kernel` makes a definition live in JupyterLab (ipywidgets
controls, the course's JavaScript renderer as an anywidget); `page` makes it live on the website (the
declaration in the page, the model run in the page by the files in `js/`, shipped with the library;
`web` installs them with the constants generated from Python).
"""
