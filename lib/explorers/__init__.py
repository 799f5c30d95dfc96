"""The explorers: interactive pictures, each declared once (`definition`, `catalogue`).

`catalogue` holds every explorer's definition (its controls and what its view holds), each
registered where it is defined (`definition.registered`); the views they show are computed beside
their computations in `lib.analysis`; `boxes` reads what a reader types; `kernel` makes a definition
live in JupyterLab (ipywidgets controls, the course's JavaScript renderer as an anywidget); `page`
makes it live on the website (the declaration in the page, the model run in the page by the files
in `js/`, shipped with the library; `web` installs them with the constants generated from Python).
"""
