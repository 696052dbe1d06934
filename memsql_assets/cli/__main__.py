from memsql_assets.cli import main

raise SystemExit(main())
