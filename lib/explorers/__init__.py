"""The explorers: the pure views behind the controls (`views`, `map_views`), their pictures
(`pictures`, drawn with `lib.pictures.charts`), their ipywidgets controls (`widgets`) and their version on the
website (`static`, `static_specs`)."""
