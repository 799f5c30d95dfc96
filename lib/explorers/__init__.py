"""The explorers: interactive pictures, each declared once (`definition`, `catalogue`).

`catalogue` holds every explorer's definition (its controls and what its view holds); `views` and
`map_views` the pure computations behind them; `kernel` makes a definition live in JupyterLab
(ipywidgets controls, the course's JavaScript renderer as an anywidget); `page` makes it live on
the website (the declaration in the page, the model run in the page by `lib/explorers/js/`).
"""
