from hinter.cli.main import main

main()
